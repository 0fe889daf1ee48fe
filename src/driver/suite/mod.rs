//! Suite tools: batch build, test and benchmark of whole SysY suites.

//! Frontend: lexer, parser, semantic analysis and lowering of SysY to IR.

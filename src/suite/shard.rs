//! Splitting a suite over several processes or machines: shard `K/N` (1-based `K`) takes the
//! cases whose name hashes to `K - 1` modulo `N`. The hash is FNV-1a of the case name (its path
//! relative to the searched directory's parent, `functional/NAME`), so every machine agrees
//! without talking to the others, and adding or removing a case moves no other case.
//!
//! Without `--shard`, the shard comes from the environment, so a job of a CI matrix or a batch
//! array needs no extra flag (first match wins):
//!
//! | variables                                        | scheduler                    | index  |
//! |--------------------------------------------------|------------------------------|--------|
//! | `SYSY_SHARD=K/N`                                 | any (explicit)               | 1-based|
//! | `CI_NODE_INDEX`, `CI_NODE_TOTAL`                 | GitLab `parallel:`           | 1-based|
//! | `JOB_COMPLETION_INDEX`, `SYSY_SHARD_TOTAL`       | Kubernetes Indexed Job       | 0-based|
//! | `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`  | Slurm job array (`--array`)  | from `SLURM_ARRAY_TASK_MIN` |
//!
//! A Kubernetes Job does not tell its pods how many completions it has, so the manifest sets
//! `SYSY_SHARD_TOTAL` to the Job's `completions`.

use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// One part of a split suite: `index` counts from 0, printed as `index + 1`/`total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub total: usize,
}

impl Shard {
    /// Whether the case named `name` belongs to this shard.
    pub fn contains(&self, name: &str) -> bool {
        self.total <= 1 || (fnv1a(name.as_bytes()) % self.total as u64) as usize == self.index
    }

    fn new(index: usize, total: usize, what: &str) -> Result<Shard, String> {
        if total == 0 || index >= total {
            return Err(format!(
                "{what}: shard {} of {total} does not exist (shards are 1..={total})",
                index + 1
            ));
        }
        Ok(Shard { index, total })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index + 1, self.total)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `K/N` with `1 <= K <= N`.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("`{s}` is not a shard: write K/N, e.g. 2/3 (K counts from 1)");
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 {
            return Err(bad());
        }
        Shard::new(k - 1, n, s)
    }
}

/// FNV-1a, 64 bits: stable across runs, machines and Rust versions.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The shard to run: `flag` if given, else one from the environment (see the module comment)
/// with the variable it came from, else `None` (the whole suite). `env` reads a variable.
pub fn resolve(
    flag: Option<Shard>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(Shard, &'static str)>, String> {
    if let Some(s) = flag {
        return Ok(Some((s, "--shard")));
    }
    let num = |var: &str| -> Result<Option<usize>, String> {
        match env(var) {
            None => Ok(None),
            Some(v) if v.trim().is_empty() => Ok(None),
            Some(v) => v
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("{var}={v} is not a number")),
        }
    };
    if let Some(v) = env("SYSY_SHARD").filter(|v| !v.trim().is_empty()) {
        return Ok(Some((
            v.parse().map_err(|e| format!("SYSY_SHARD: {e}"))?,
            "SYSY_SHARD",
        )));
    }
    if let (Some(k), Some(n)) = (num("CI_NODE_INDEX")?, num("CI_NODE_TOTAL")?) {
        if k == 0 {
            return Err("CI_NODE_INDEX=0: GitLab counts nodes from 1".into());
        }
        return Ok(Some((
            Shard::new(k - 1, n, "CI_NODE_INDEX")?,
            "CI_NODE_INDEX",
        )));
    }
    if let Some(k) = num("JOB_COMPLETION_INDEX")? {
        let n = num("SYSY_SHARD_TOTAL")?.ok_or(
            "JOB_COMPLETION_INDEX is set but the number of shards is not: set SYSY_SHARD_TOTAL \
             to the Job's completions (or pass --shard K/N)",
        )?;
        return Ok(Some((
            Shard::new(k, n, "JOB_COMPLETION_INDEX")?,
            "JOB_COMPLETION_INDEX",
        )));
    }
    if let (Some(id), Some(n)) = (num("SLURM_ARRAY_TASK_ID")?, num("SLURM_ARRAY_TASK_COUNT")?) {
        let min = num("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let k = id.checked_sub(min).ok_or_else(|| {
            format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}")
        })?;
        return Ok(Some((
            Shard::new(k, n, "SLURM_ARRAY_TASK_ID")?,
            "SLURM_ARRAY_TASK_ID",
        )));
    }
    Ok(None)
}

/// [`resolve`] with the process environment, announcing a shard taken from it on stderr.
pub fn from_args_or_env(flag: Option<Shard>, tool: &str) -> Result<Option<Shard>, String> {
    let found = resolve(flag, &|v| std::env::var(v).ok())?;
    if let Some((s, from)) = found {
        if s.total > 1 && from != "--shard" {
            eprintln!("{tool}: shard {s} (from {from})");
        }
    }
    Ok(found.map(|(s, _)| s).filter(|s| s.total > 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn parses_k_of_n() {
        assert_eq!("2/3".parse(), Ok(Shard { index: 1, total: 3 }));
        assert_eq!("1/1".parse::<Shard>().unwrap().to_string(), "1/1");
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_partition_and_are_stable() {
        let names: Vec<String> = (0..500).map(|i| format!("suite/case_{i}")).collect();
        let shards: Vec<Shard> = (0..3).map(|index| Shard { index, total: 3 }).collect();
        for n in &names {
            assert_eq!(shards.iter().filter(|s| s.contains(n)).count(), 1, "{n}");
        }
        // Roughly even, and a fixed assignment (the hash must never change silently).
        for s in &shards {
            let k = names.iter().filter(|n| s.contains(n)).count();
            assert!((120..=215).contains(&k), "shard {s}: {k} cases");
        }
        assert_eq!(fnv1a(b"suite/some_case"), 0x60de_0d3f_7c0d_d7e1_u64);
    }

    #[test]
    fn environment_of_each_scheduler() {
        let get = |pairs: &[(&str, &str)]| resolve(None, &env_of(pairs));
        let s = |index, total| Shard { index, total };
        assert_eq!(get(&[]).unwrap(), None);
        assert_eq!(
            get(&[("CI_NODE_INDEX", "1"), ("CI_NODE_TOTAL", "4")]).unwrap(),
            Some((s(0, 4), "CI_NODE_INDEX"))
        );
        assert_eq!(
            get(&[("JOB_COMPLETION_INDEX", "0"), ("SYSY_SHARD_TOTAL", "3")]).unwrap(),
            Some((s(0, 3), "JOB_COMPLETION_INDEX"))
        );
        assert!(get(&[("JOB_COMPLETION_INDEX", "0")]).is_err());
        assert_eq!(
            get(&[
                ("SLURM_ARRAY_TASK_ID", "5"),
                ("SLURM_ARRAY_TASK_COUNT", "5"),
                ("SLURM_ARRAY_TASK_MIN", "1")
            ])
            .unwrap(),
            Some((s(4, 5), "SLURM_ARRAY_TASK_ID"))
        );
        assert_eq!(
            get(&[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "3")
            ])
            .unwrap(),
            Some((s(2, 3), "SLURM_ARRAY_TASK_ID"))
        );
        assert!(get(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "3")
        ])
        .is_err());
        assert!(get(&[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "2")]).is_err());
        // An explicit choice wins over the scheduler's.
        assert_eq!(
            resolve(Some(s(1, 2)), &env_of(&[("SYSY_SHARD", "1/3")])).unwrap(),
            Some((s(1, 2), "--shard"))
        );
        assert_eq!(
            get(&[
                ("SYSY_SHARD", "3/3"),
                ("CI_NODE_INDEX", "1"),
                ("CI_NODE_TOTAL", "2")
            ])
            .unwrap(),
            Some((s(2, 3), "SYSY_SHARD"))
        );
    }
}

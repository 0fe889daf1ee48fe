//! The per-block execution profile our qemu plugin writes with `profile=PATH`
//! (perf/qemu-plugin/insn_count.c): for each translation block executed before the runtime's exit
//! marker, its start address, instruction count, executions, how often control left it by a
//! transfer (taken), and mispredictions of its final conditional branch by a 2-bit counter.

/// How a translation block ends (the plugin's `end kind`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EndKind {
    /// No control transfer (the block was cut at a page end or qemu's size limit).
    None,
    /// A conditional branch.
    Branch,
    /// A direct jump or call.
    Jump,
    /// An indirect jump, call or return.
    Indirect,
    /// A system call or another instruction that ends a block.
    Other,
}

/// One translation block of the profile.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Block {
    pub pc: u64,
    pub insns: u64,
    pub execs: u64,
    /// Executions after which the next block did not start right after this one.
    pub taken: u64,
    /// Mispredicted executions of the final conditional branch (0 for other kinds).
    pub mispredicted: u64,
    pub kind: EndKind,
}

/// A whole run's profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    pub blocks: Vec<Block>,
}

impl Profile {
    /// Parses the plugin's file (a `#` header line, then one line per block).
    pub fn parse(text: &str) -> Result<Profile, String> {
        let mut blocks = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = || format!("profile line {}: `{line}`", n + 1);
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() != 6 {
                return Err(bad());
            }
            let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
            let kind = match f[5] {
                "0" => EndKind::None,
                "1" => EndKind::Branch,
                "2" => EndKind::Jump,
                "3" => EndKind::Indirect,
                "4" => EndKind::Other,
                _ => return Err(bad()),
            };
            blocks.push(Block {
                pc: u64::from_str_radix(f[0], 16).map_err(|_| bad())?,
                insns: num(f[1])?,
                execs: num(f[2])?,
                taken: num(f[3])?,
                mispredicted: num(f[4])?,
                kind,
            });
        }
        // The plugin writes in hash order; a stable order makes the figures reproducible.
        blocks.sort_unstable_by_key(|b| (b.pc, b.insns));
        Ok(Profile { blocks })
    }

    /// Executed instructions: sum over blocks of instructions × executions.
    pub fn insns(&self) -> u64 {
        self.blocks.iter().map(|b| b.insns * b.execs).sum()
    }

    /// Control transfers (taken branches and jumps) in the run.
    pub fn taken(&self) -> u64 {
        self.blocks.iter().map(|b| b.taken).sum()
    }

    /// Estimated branch mispredictions in the run.
    pub fn mispredicted(&self) -> u64 {
        self.blocks.iter().map(|b| b.mispredicted).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_plugin_format() {
        let p = Profile::parse(
            "# pc insns execs taken mispredicted kind\n10a4 3 10 9 2 1\n1000 2 1 1 0 2\n",
        )
        .unwrap();
        assert_eq!(p.blocks.len(), 2);
        assert_eq!(p.blocks[0].pc, 0x1000);
        assert_eq!(p.blocks[1].kind, EndKind::Branch);
        assert_eq!((p.insns(), p.taken(), p.mispredicted()), (32, 10, 2));
        assert!(Profile::parse("10a4 3 10 9 2\n").is_err());
        assert!(Profile::parse("zz 3 10 9 2 1\n").is_err());
    }
}

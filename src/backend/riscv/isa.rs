//! The target's ISA extensions beyond rv64gc, from a `-march=` string.
//!
//! rv64gc (= rv64imafdc) is the default and the base every output assumes. Zba (address
//! generation: `sh1add`/`sh2add`/`sh3add`, `add.uw`) and Zbb (basic bit manipulation: `andn`,
//! `orn`, `xnor`, `min`, `max`, ...) are optional; the board's U74 cores implement both. When
//! either is on, the assembly announces it with `.option arch`, so GNU as accepts the new
//! instructions whatever `-march` it was given.

/// Extensions the backend may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Isa {
    pub zba: bool,
    pub zbb: bool,
}

impl Isa {
    /// Parses `rv64gc` or `rv64imafdc` followed by any of `_zba`, `_zbb` in any order, case
    /// insensitively. Anything else is an error naming what is not supported.
    pub fn parse(march: &str) -> Result<Isa, String> {
        let lower = march.to_ascii_lowercase();
        let mut parts = lower.split('_');
        let base = parts.next().unwrap_or("");
        if base != "rv64gc" && base != "rv64imafdc" {
            return Err(format!(
                "unsupported -march '{march}': the base must be rv64gc or rv64imafdc"
            ));
        }
        let mut isa = Isa::default();
        for ext in parts {
            match ext {
                "zba" => isa.zba = true,
                "zbb" => isa.zbb = true,
                "" => return Err(format!("unsupported -march '{march}': empty extension")),
                _ => {
                    return Err(format!(
                    "unsupported -march '{march}': unknown extension '{ext}' (supported: zba, zbb)"
                ))
                }
            }
        }
        Ok(isa)
    }

    /// The directive enabling the extensions in GNU as, if any is on.
    pub fn asm_directive(self) -> Option<String> {
        let exts: Vec<&str> = [(self.zba, "+zba"), (self.zbb, "+zbb")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|&(_, e)| e)
            .collect();
        (!exts.is_empty()).then(|| format!("\t.option arch, {}\n", exts.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn march_strings() {
        assert_eq!(Isa::parse("rv64gc"), Ok(Isa::default()));
        assert_eq!(Isa::parse("rv64imafdc"), Ok(Isa::default()));
        let both = Isa {
            zba: true,
            zbb: true,
        };
        assert_eq!(Isa::parse("rv64gc_zba_zbb"), Ok(both));
        assert_eq!(Isa::parse("rv64gc_zbb_zba"), Ok(both));
        assert!(Isa::parse("RV64IMAFDC_ZBB").unwrap().zbb);
        assert!(!Isa::parse("rv64gc_zba").unwrap().zbb);
        assert!(Isa::parse("rv64gc_zbc")
            .unwrap_err()
            .contains("unknown extension 'zbc'"));
        assert!(Isa::parse("rv32gc").is_err());
        assert!(Isa::parse("rv64gc_").is_err());
        assert!(Isa::parse("").is_err());
        assert_eq!(Isa::default().asm_directive(), None);
        assert_eq!(
            both.asm_directive().as_deref(),
            Some("\t.option arch, +zba, +zbb\n")
        );
    }
}

# Loads and stores: one memory pipe (pipe A), 3-cycle integer load latency (U74 manual),
# 2 for FP loads (LLVM SiFive7).

# LLVM-MCA-BEGIN load_chain
	ld	a0, 0(a0)
# LLVM-MCA-END

# LLVM-MCA-BEGIN load_independent_x4
	lw	a1, 0(a0)
	lw	a2, 4(a0)
	lw	a3, 8(a0)
	lw	a4, 12(a0)
# LLVM-MCA-END

# LLVM-MCA-BEGIN load_add_use
	lw	a1, 0(a0)
	add	a2, a2, a1
# LLVM-MCA-END

# LLVM-MCA-BEGIN store_independent_x2
	sw	a1, 0(a0)
	sw	a2, 4(a0)
# LLVM-MCA-END

# LLVM-MCA-BEGIN load_alu_pairs
	lw	a1, 0(a0)
	addi	a3, a3, 1
	lw	a2, 4(a0)
	addi	a4, a4, 1
# LLVM-MCA-END

# LLVM-MCA-BEGIN fp_load_chain_through_int
	fld	fa0, 0(a0)
	fmv.x.d	a0, fa0
# LLVM-MCA-END

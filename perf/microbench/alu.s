# Integer ALU: each region is one loop body, costed repeated back to back (steady state).
# Expected by the U74 model: 1 cycle of latency per ALU op, two ALU ops per cycle when independent.

# LLVM-MCA-BEGIN add_dependent_x4
	add	a0, a0, a1
	add	a0, a0, a1
	add	a0, a0, a1
	add	a0, a0, a1
# LLVM-MCA-END

# LLVM-MCA-BEGIN add_independent_x4
	add	a0, a0, a4
	add	a1, a1, a4
	add	a2, a2, a4
	add	a3, a3, a4
# LLVM-MCA-END

# LLVM-MCA-BEGIN shift_add_dependent
	slli	a1, a0, 2
	add	a0, a1, a2
# LLVM-MCA-END

# LLVM-MCA-BEGIN addiw_sext_chain
	addiw	a0, a0, 1
	sext.w	a0, a0
# LLVM-MCA-END

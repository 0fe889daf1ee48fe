# Multiply (pipelined, 3 cycles) and divide (unpipelined, 34 cycles for the 32-bit forms and
# 66 for the 64-bit ones in our model; LLVM 14's SiFive7 says 16 for all).

# LLVM-MCA-BEGIN mul_dependent
	mul	a0, a0, a1
# LLVM-MCA-END

# LLVM-MCA-BEGIN mul_independent_x4
	mul	a0, a0, a4
	mul	a1, a1, a4
	mul	a2, a2, a4
	mul	a3, a3, a4
# LLVM-MCA-END

# LLVM-MCA-BEGIN mulh_magic_division
	mulh	a1, a0, a2
	srai	a1, a1, 2
	srli	a3, a0, 63
	add	a1, a1, a3
# LLVM-MCA-END

# LLVM-MCA-BEGIN divw_dependent
	divw	a0, a0, a1
# LLVM-MCA-END

# LLVM-MCA-BEGIN divw_independent_x2
	divw	a2, a0, a1
	remw	a3, a0, a1
# LLVM-MCA-END

# LLVM-MCA-BEGIN div64_dependent
	div	a0, a0, a1
# LLVM-MCA-END

# Floating point (pipe B): latencies of LLVM's SiFive7 model.

# LLVM-MCA-BEGIN fadd_s_dependent
	fadd.s	fa0, fa0, fa1
# LLVM-MCA-END

# LLVM-MCA-BEGIN fmul_d_dependent
	fmul.d	fa0, fa0, fa1
# LLVM-MCA-END

# LLVM-MCA-BEGIN fadd_s_independent_x4
	fadd.s	fa0, fa0, fa4
	fadd.s	fa1, fa1, fa4
	fadd.s	fa2, fa2, fa4
	fadd.s	fa3, fa3, fa4
# LLVM-MCA-END

# LLVM-MCA-BEGIN fdiv_s_independent_x2
	fdiv.s	fa0, fa2, fa3
	fdiv.s	fa1, fa2, fa3
# LLVM-MCA-END

# LLVM-MCA-BEGIN fcvt_round_trip
	fcvt.s.w	fa0, a0
	fcvt.w.s	a0, fa0, rtz
# LLVM-MCA-END

# LLVM-MCA-BEGIN fload_fmadd_fstore
	flw	fa1, 0(a0)
	fmadd.s	fa0, fa1, fa2, fa0
	fsw	fa0, 4(a0)
	addi	a0, a0, 4
# LLVM-MCA-END

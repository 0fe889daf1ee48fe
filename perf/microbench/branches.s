# Branch bodies in steady state: the branch itself issues on pipe B. The taken-branch bubble
# and mispredictions are not in a block's steady state; bench adds them from the profile (see
# programs/ for those, measured end to end under qemu).

# LLVM-MCA-BEGIN counted_loop_body
	addi	a0, a0, 1
	bne	a0, a1, .Lloop
# LLVM-MCA-END

# LLVM-MCA-BEGIN compare_and_branch_pair
	slt	a2, a0, a1
	addi	a0, a0, 1
	bnez	a2, .Lloop
# LLVM-MCA-END

# LLVM-MCA-BEGIN mul_then_branch
	mul	a2, a2, a3
	bne	a0, a1, .Lloop
# LLVM-MCA-END
.Lloop:

# A loop with an inner branch that is never taken (falls through), plus the back edge.
	.text
	.globl	main
main:
	li	a0, ITER
	li	a1, 0
.Lloop:
	bltz	a0, .Lskip
	addi	a1, a1, 1
.Lskip:
	addi	a0, a0, -1
	bnez	a0, .Lloop
	li	a0, 0
	ret

# A counted loop: one taken back edge per iteration.
	.text
	.globl	main
main:
	li	a0, ITER
.Lloop:
	addi	a0, a0, -1
	bnez	a0, .Lloop
	ret

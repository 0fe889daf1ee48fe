# An inner branch on a pseudo-random bit (a 32-bit LCG's top bit): about half mispredicted.
	.text
	.globl	main
main:
	li	a0, ITER
	li	a1, 12345
	li	a3, 1103515245
.Lloop:
	mulw	a1, a1, a3
	addiw	a1, a1, 1013
	bltz	a1, .Lskip
	addi	a4, a4, 1
.Lskip:
	addi	a0, a0, -1
	bnez	a0, .Lloop
	li	a0, 0
	ret

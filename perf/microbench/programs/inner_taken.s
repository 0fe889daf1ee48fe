# A loop with an inner branch that is always taken, plus the back edge: two taken per iteration.
	.text
	.globl	main
main:
	li	a0, ITER
	li	a1, 0
.Lloop:
	bgez	a0, .Lskip
	addi	a1, a1, 1
.Lskip:
	addi	a0, a0, -1
	bnez	a0, .Lloop
	li	a0, 0
	ret

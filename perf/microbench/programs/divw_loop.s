# A loop whose body is one divw on the loop counter: the unpipelined divider per iteration.
	.text
	.globl	main
main:
	li	a0, ITER
	li	a1, 7
.Lloop:
	divw	a2, a0, a1
	addi	a0, a0, -1
	bnez	a0, .Lloop
	li	a0, 0
	ret

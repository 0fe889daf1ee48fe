# An inner branch taken every other iteration: the plugin's 2-bit counter per branch swings
# between its two not-taken states and mispredicts every taken one (half); a predictor with
# branch history would learn the pattern, so the estimate is pessimistic here.
	.text
	.globl	main
main:
	li	a0, ITER
	li	a1, 0
.Lloop:
	andi	a2, a0, 1
	beqz	a2, .Lskip
	addi	a1, a1, 1
.Lskip:
	addi	a0, a0, -1
	bnez	a0, .Lloop
	li	a0, 0
	ret

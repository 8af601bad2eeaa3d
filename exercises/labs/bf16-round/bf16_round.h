/* exercises/labs/bf16-round/bf16_round.h: the three functions of the
   rounding lab (Chapter 12), which bf16_round.c defines. */
#ifndef BF16_ROUND_H
#define BF16_ROUND_H

#include <stdint.h>

/* x rounded to bf16 (1 sign, 8 exponent, 7 fraction bits), as its bits:
   to the nearest bf16 number, ties to the one whose last bit is 0;
   beyond the largest, infinity; infinities and zeros keep their sign; a
   NaN stays a NaN of the same sign. */
uint16_t round_to_bf16(float x);

/* x rounded to fp16 (1 sign, 5 exponent, 10 fraction bits, bias 15,
   subnormals below 2^-14), as its bits, by the same rule. */
uint16_t round_to_fp16(float x);

/* The number that fp16's bits h stand for. */
float fp16_to_float(uint16_t h);
#endif

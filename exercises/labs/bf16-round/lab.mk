# exercises/labs/bf16-round/lab.mk: the rounding lab (Chapter 12). The
# student's bf16_round.c, from $(LAB_WORK), with the autograder, which
# includes the book's conversions from code/minigpt/number_formats.h.
LAB_FILES_bf16-round := bf16_round.c
LAB_FLAGS_bf16-round = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/bf16-round -Icode/minigpt

lab-grade-bf16-round:
	@mkdir -p $(LAB_OUT)
	$(CC) $(LAB_FLAGS_bf16-round) -c $(LAB_WORK)/bf16_round.c \
	  -o $(LAB_OUT)/bf16_round.o
	$(CC) $(LAB_FLAGS_bf16-round) -c exercises/labs/bf16-round/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(CC) $(CFLAGS) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/bf16_round.o \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

# exercises/labs/tp/lab.mk: the lab of chapter 9, column- and row-parallel
# linear layers. The student's layers are linked with the autograder and an
# archive of the trainer's other objects, from which the linker takes only
# what the two need (the reference's matmul), and grade.sh runs it on 4
# ranks.
LAB_FILES_tp := parallel_linear.c

LAB_TP_BOOK := \
  $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(filter-out code/minigpt/bench.c \
    code/minigpt/main.c code/minigpt/parallel_linear.c,\
    $(wildcard code/minigpt/*.c))) \
  $(LAB_BOOK)/comm/ring.o $(LAB_BOOK)/comm/mesh.o \
  $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(wildcard code/common/*.c))

lab-grade-tp: $(LAB_TP_BOOK)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(CFLAGS) $(FAST) -Iexercises/labs/tp -Icode/minigpt \
	  -c $(LAB_WORK)/parallel_linear.c -o $(LAB_OUT)/student.o
	$(MPICC) $(CFLAGS) $(FAST) -Iexercises/labs/tp -Icode/minigpt \
	  -c exercises/labs/tp/grade.c -o $(LAB_OUT)/grade.o
	rm -f $(LAB_OUT)/trainer.a
	ar qcs $(LAB_OUT)/trainer.a $^
	$(MPICC) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/student.o \
	  $(LAB_OUT)/trainer.a $(LDLIBS) -o $(LAB_OUT)/grade
	@sh exercises/labs/tp/grade.sh $(LAB_OUT)

# exercises/labs/router/lab.mk: the router lab (Chapter 14). The student's
# router.c, from $(LAB_WORK), with the autograder, which includes the
# expert-parallel layer's code/moe/moe.c, and the parts of the trainer it
# calls, compiled from code/ into $(LAB_OUT) (kept there, and compiled
# again when a source is newer). One process, no mpiexec.
LAB_FILES_router := router.c
LAB_BOOK_router := code/minigpt/gemm.c code/minigpt/layers.c \
    code/minigpt/rng.c code/common/format.c code/common/options.c \
    code/common/output.c code/common/report.c \
    code/common/machinefile.c code/common/pipeline_schedule.c
LAB_FLAGS_router = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/router -Icode/moe -Icode/minigpt -Icode/common

lab-grade-router:
	@mkdir -p $(LAB_OUT)
	@for f in $(LAB_BOOK_router); do \
	  o=$(LAB_OUT)/book-$$(basename $$f .c).o; \
	  if [ ! -f $$o ] || [ -n "$$(find $$f code/*/*.h -newer $$o)" ]; \
	  then $(MPICC) $(LAB_FLAGS_router) -c $$f -o $$o || exit 1; fi; \
	done
	@$(MPICC) $(LAB_FLAGS_router) -c $(LAB_WORK)/router.c \
	  -o $(LAB_OUT)/router.o
	@$(MPICC) $(LAB_FLAGS_router) -c exercises/labs/router/grade.c \
	  -o $(LAB_OUT)/grade.o
	@$(MPICC) $(CFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/router.o \
	  $(addprefix $(LAB_OUT)/book-,$(notdir $(LAB_BOOK_router:.c=.o))) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

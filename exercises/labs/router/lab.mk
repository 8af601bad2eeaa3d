# exercises/labs/router/lab.mk: the router lab (Chapter 14). The
# student's router.c, from $(LAB_WORK), with the autograder, which includes
# the expert-parallel layer's code/moe/moe.c, and the parts of the trainer
# it calls. One process, no mpiexec.
# The book's objects are $(LAB_BOOK)'s (exercises/labs/labs.mk).
LAB_FILES_router := router.c
LAB_BOOK_router := $(LAB_BOOK)/minigpt/gemm.o $(LAB_BOOK)/minigpt/layers.o \
    $(LAB_BOOK)/minigpt/rng.o \
    $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(wildcard code/common/*.c))
LAB_FLAGS_router = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/router -Icode/moe -Icode/minigpt -Icode/common

lab-grade-router: $(LAB_BOOK_router)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(LAB_FLAGS_router) -c $(LAB_WORK)/router.c \
	  -o $(LAB_OUT)/router.o
	$(MPICC) $(LAB_FLAGS_router) -c exercises/labs/router/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(MPICC) $(CFLAGS) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/router.o \
	  $(LAB_BOOK_router) $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

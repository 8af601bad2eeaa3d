# exercises/labs/attention/lab.mk: the lab of chapter 6, the backward pass
# of causal attention. The double-precision trainer is linked with the
# student's attention_backward in place of the chapter's (layers.c is
# compiled again with -DLAB_ATTENTION_BACKWARD, which leaves its own out),
# and grade.sh runs its gradient check on a tiny model.
LAB_FILES_attention := attention_backward.c

LAB_ATTENTION_BOOK := \
  $(patsubst code/%.c,$(LAB_BOOK64)/%.o,$(filter-out code/minigpt/bench.c \
    code/minigpt/layers.c,$(wildcard code/minigpt/*.c))) \
  $(LAB_BOOK64)/cuda/absent.o $(LAB_BOOK)/comm/ring.o $(LAB_BOOK)/comm/mesh.o \
  $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(wildcard code/common/*.c))

lab-grade-attention: $(LAB_ATTENTION_BOOK)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(CFLAGS) $(FAST) -DMINIGPT_FP64 -DLAB_ATTENTION_BACKWARD \
	  -c code/minigpt/layers.c -o $(LAB_OUT)/layers.o
	$(MPICC) $(CFLAGS) $(FAST) -DMINIGPT_FP64 -Icode/minigpt \
	  -c $(LAB_WORK)/attention_backward.c -o $(LAB_OUT)/student.o
	$(MPICC) $(LDFLAGS) $(LAB_OUT)/layers.o $(LAB_OUT)/student.o $^ \
	  $(LDLIBS) -o $(LAB_OUT)/minigpt-lab
	@sh exercises/labs/attention/grade.sh $(LAB_OUT)

# exercises/labs/ring/lab.mk: the lab of chapter 7, the ring reduce-scatter
# and all-gather. The student's ring.c replaces code/comm/ring.c in the
# chapter's benchmark, allreduce, which checks every element of every
# result; grade.sh runs it on 1 to 4 ranks.
LAB_FILES_ring := ring.c

LAB_RING_BOOK := $(LAB_BOOK)/comm/allreduce.o $(LAB_BOOK)/comm/mesh.o \
  $(patsubst code/%.c,$(LAB_BOOK)/%.o,$(wildcard code/common/*.c))

lab-grade-ring: $(LAB_RING_BOOK)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(CFLAGS) $(FAST) -Icode/comm -c $(LAB_WORK)/ring.c \
	  -o $(LAB_OUT)/ring.o
	$(MPICC) $(LDFLAGS) $(LAB_OUT)/ring.o $^ $(LDLIBS) \
	  -o $(LAB_OUT)/allreduce-lab
	@sh exercises/labs/ring/grade.sh $(LAB_OUT)

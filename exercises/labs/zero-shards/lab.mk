# exercises/labs/zero-shards/lab.mk: the ZeRO lab (Chapter 8). The
# student's zero_shards.c, from $(LAB_WORK), with the autograder and the
# book's ring_chunks (code/comm/ring.c) and shard_state (code/fleet/zero.c),
# and what they call. One process, no mpiexec.
# The book's objects are $(LAB_BOOK)'s (exercises/labs/labs.mk).
LAB_FILES_zero-shards := zero_shards.c
LAB_BOOK_zero-shards := $(LAB_BOOK)/comm/ring.o $(LAB_BOOK)/fleet/zero.o \
    $(LAB_BOOK)/fleet/collectives.o $(LAB_BOOK)/common/format.o \
    $(LAB_BOOK)/common/options.o $(LAB_BOOK)/common/output.o
LAB_FLAGS_zero-shards = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/zero-shards -Icode/comm -Icode/fleet -Icode/common

lab-grade-zero-shards: $(LAB_BOOK_zero-shards)
	@mkdir -p $(LAB_OUT)
	$(MPICC) $(LAB_FLAGS_zero-shards) -c $(LAB_WORK)/zero_shards.c \
	  -o $(LAB_OUT)/zero_shards.o
	$(MPICC) $(LAB_FLAGS_zero-shards) -c exercises/labs/zero-shards/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(MPICC) $(CFLAGS) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/zero_shards.o \
	  $(LAB_BOOK_zero-shards) $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

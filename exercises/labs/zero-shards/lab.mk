# exercises/labs/zero-shards/lab.mk: the ZeRO lab (Chapter 8). The
# student's zero_shards.c, from $(LAB_WORK), with the autograder and the
# book's ring_chunks and shard_state, compiled from code/ into $(LAB_OUT)
# (kept there, and compiled again when a source is newer).
LAB_FILES_zero-shards := zero_shards.c
LAB_BOOK_zero-shards := code/comm/ring.c code/fleet/zero.c \
    code/fleet/collectives.c code/common/format.c code/common/options.c \
    code/common/output.c
LAB_FLAGS_zero-shards = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/zero-shards -Icode/comm -Icode/fleet -Icode/common

lab-grade-zero-shards:
	@mkdir -p $(LAB_OUT)
	@for f in $(LAB_BOOK_zero-shards); do \
	  o=$(LAB_OUT)/book-$$(basename $$f .c).o; \
	  if [ ! -f $$o ] || [ -n "$$(find $$f code/*/*.h -newer $$o)" ]; \
	  then $(MPICC) $(LAB_FLAGS_zero-shards) -c $$f -o $$o || exit 1; fi; \
	done
	@$(MPICC) $(LAB_FLAGS_zero-shards) -c $(LAB_WORK)/zero_shards.c \
	  -o $(LAB_OUT)/zero_shards.o
	@$(MPICC) $(LAB_FLAGS_zero-shards) -c exercises/labs/zero-shards/grade.c \
	  -o $(LAB_OUT)/grade.o
	@$(MPICC) $(CFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/zero_shards.o \
	  $(addprefix $(LAB_OUT)/book-,$(notdir $(LAB_BOOK_zero-shards:.c=.o))) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

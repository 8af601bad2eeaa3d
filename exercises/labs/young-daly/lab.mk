# exercises/labs/young-daly/lab.mk: the checkpoint lab (Chapter 13). The
# student's young_daly.c, from $(LAB_WORK), with the autograder, which
# includes the planner's code/fleet/checkpoint.c, and the parts of the
# planner that it calls, compiled from code/ into $(LAB_OUT) (kept there,
# and compiled again when a source is newer).
LAB_FILES_young-daly := young_daly.c
LAB_BOOK_young-daly := code/fleet/memory.c code/fleet/zero.c \
    code/fleet/collectives.c code/common/format.c code/common/options.c \
    code/common/output.c code/common/report.c
LAB_FLAGS_young-daly = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/young-daly -Icode/fleet -Icode/common

lab-grade-young-daly:
	@mkdir -p $(LAB_OUT)
	@for f in $(LAB_BOOK_young-daly); do \
	  o=$(LAB_OUT)/book-$$(basename $$f .c).o; \
	  if [ ! -f $$o ] || [ -n "$$(find $$f code/*/*.h -newer $$o)" ]; \
	  then $(CC) $(LAB_FLAGS_young-daly) -c $$f -o $$o || exit 1; fi; \
	done
	@$(CC) $(LAB_FLAGS_young-daly) -c $(LAB_WORK)/young_daly.c \
	  -o $(LAB_OUT)/young_daly.o
	@$(CC) $(LAB_FLAGS_young-daly) -c exercises/labs/young-daly/grade.c \
	  -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/young_daly.o \
	  $(addprefix $(LAB_OUT)/book-,$(notdir $(LAB_BOOK_young-daly:.c=.o))) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

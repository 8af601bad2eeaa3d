# exercises/labs/young-daly/lab.mk: the checkpoint lab (Chapter 13). The
# student's young_daly.c, from $(LAB_WORK), with the autograder, which
# includes the planner's code/fleet/checkpoint.c, and the parts of the
# planner that it calls.
# The book's objects are $(LAB_BOOK)'s (exercises/labs/labs.mk).
LAB_FILES_young-daly := young_daly.c
LAB_BOOK_young-daly := $(LAB_BOOK)/fleet/memory.o $(LAB_BOOK)/fleet/zero.o \
    $(LAB_BOOK)/fleet/collectives.o $(LAB_BOOK)/common/format.o \
    $(LAB_BOOK)/common/options.o $(LAB_BOOK)/common/output.o \
    $(LAB_BOOK)/common/report.o
LAB_FLAGS_young-daly = $(CFLAGS) -Iexercises/labs/common \
    -Iexercises/labs/young-daly -Icode/fleet -Icode/common

lab-grade-young-daly: $(LAB_BOOK_young-daly)
	@mkdir -p $(LAB_OUT)
	$(CC) $(LAB_FLAGS_young-daly) -c $(LAB_WORK)/young_daly.c \
	  -o $(LAB_OUT)/young_daly.o
	$(CC) $(LAB_FLAGS_young-daly) -c exercises/labs/young-daly/grade.c \
	  -o $(LAB_OUT)/grade.o
	$(CC) $(CFLAGS) $(LDFLAGS) $(LAB_OUT)/grade.o $(LAB_OUT)/young_daly.o \
	  $(LAB_BOOK_young-daly) $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

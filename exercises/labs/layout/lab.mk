# exercises/labs/layout/lab.mk: the lab of chapter 5, each kind of traffic
# on the link that carries it. The student's traffic.c (from $(LAB_WORK))
# is compiled with the autograder and the chapter's planner, built from
# source with what its evaluate_plan calls of the earlier chapters (the
# parts, the collectives, the memory of a GPU, the pipeline's bubble); the
# linker drops what of them the lab does not use (the subcommands).
LAB_FILES_layout := traffic.c

LAB_LAYOUT_FLAGS = -Icode/common -Icode/fleet -Iexercises/labs/common \
  -Iexercises/labs/layout
LAB_LAYOUT_BOOK = code/fleet/layout.c code/fleet/stages.c \
  code/fleet/zero.c code/fleet/memory.c code/fleet/collectives.c \
  code/fleet/activations.c code/common/pipeline_schedule.c

lab-grade-layout:
	@mkdir -p $(LAB_OUT)/book
	@for f in $(LAB_LAYOUT_BOOK); do \
	  $(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_LAYOUT_FLAGS) -c $$f \
	    -o $(LAB_OUT)/book/$$(basename $$f .c).o || exit 1; done
	@$(CC) $(CFLAGS) $(LAB_LAYOUT_FLAGS) -c $(LAB_WORK)/traffic.c \
	  -o $(LAB_OUT)/traffic.o
	@$(CC) $(CFLAGS) $(LAB_LAYOUT_FLAGS) -c exercises/labs/layout/grade.c \
	  -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) -Wl,--gc-sections $(LAB_OUT)/grade.o $(LAB_OUT)/traffic.o \
	  $(LAB_OUT)/book/*.o $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

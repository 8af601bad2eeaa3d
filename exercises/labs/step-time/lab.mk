# exercises/labs/step-time/lab.mk: the lab of chapter 3, what a collective
# costs. The student's ring_time.c (from $(LAB_WORK)) is compiled with the
# autograder and the chapter's code/fleet/collectives.c and memory.c (the
# parts the links come from), built from source; the linker drops what of
# memory.c the lab does not use.
LAB_FILES_step-time := ring_time.c

LAB_STEP_TIME_FLAGS = -Icode/common -Icode/fleet -Iexercises/labs/common \
  -Iexercises/labs/step-time

lab-grade-step-time:
	@mkdir -p $(LAB_OUT)
	@$(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_STEP_TIME_FLAGS) \
	  -c code/fleet/collectives.c -o $(LAB_OUT)/collectives.o
	@$(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_STEP_TIME_FLAGS) \
	  -c code/fleet/memory.c -o $(LAB_OUT)/memory.o
	@$(CC) $(CFLAGS) $(LAB_STEP_TIME_FLAGS) -c $(LAB_WORK)/ring_time.c \
	  -o $(LAB_OUT)/ring_time.o
	@$(CC) $(CFLAGS) $(LAB_STEP_TIME_FLAGS) \
	  -c exercises/labs/step-time/grade.c -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) -Wl,--gc-sections \
	  $(addprefix $(LAB_OUT)/,grade.o ring_time.o collectives.o memory.o) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

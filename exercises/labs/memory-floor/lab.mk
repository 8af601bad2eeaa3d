# exercises/labs/memory-floor/lab.mk: the lab of chapter 1, the memory
# floor. The student's floor.c (from $(LAB_WORK)) is compiled with the
# autograder and the chapter's code/fleet/memory.c, built from source; the
# linker drops what of memory.c the floor does not use (its subcommand).
LAB_FILES_memory-floor := floor.c

lab-grade-memory-floor:
	@mkdir -p $(LAB_OUT)
	@$(CC) $(CFLAGS) -O0 -ffunction-sections -Icode/common -Icode/fleet \
	  -c code/fleet/memory.c -o $(LAB_OUT)/memory.o
	@$(CC) $(CFLAGS) -Icode/common -Icode/fleet \
	  -Iexercises/labs/memory-floor -c $(LAB_WORK)/floor.c \
	  -o $(LAB_OUT)/floor.o
	@$(CC) $(CFLAGS) -Icode/common -Icode/fleet -Iexercises/labs/common \
	  -Iexercises/labs/memory-floor \
	  -c exercises/labs/memory-floor/grade.c -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) -Wl,--gc-sections $(LAB_OUT)/grade.o $(LAB_OUT)/floor.o \
	  $(LAB_OUT)/memory.o $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

# exercises/labs/fleet-size/lab.mk: the lab of chapter 2, the fleet a
# deadline demands. The student's fleet_size.c (from $(LAB_WORK)) is
# compiled with the autograder and the chapter's code/fleet/compute.c and
# memory.c (the parts and ceil_count), built from source; the linker drops
# what of them the lab does not use (their subcommands).
LAB_FILES_fleet-size := fleet_size.c

LAB_FLEET_SIZE_FLAGS = -Icode/common -Icode/fleet -Iexercises/labs/common \
  -Iexercises/labs/fleet-size

lab-grade-fleet-size:
	@mkdir -p $(LAB_OUT)
	@$(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_FLEET_SIZE_FLAGS) \
	  -c code/fleet/compute.c -o $(LAB_OUT)/compute.o
	@$(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_FLEET_SIZE_FLAGS) \
	  -c code/fleet/memory.c -o $(LAB_OUT)/memory.o
	@$(CC) $(CFLAGS) $(LAB_FLEET_SIZE_FLAGS) -c $(LAB_WORK)/fleet_size.c \
	  -o $(LAB_OUT)/fleet_size.o
	@$(CC) $(CFLAGS) $(LAB_FLEET_SIZE_FLAGS) \
	  -c exercises/labs/fleet-size/grade.c -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) -Wl,--gc-sections \
	  $(addprefix $(LAB_OUT)/,grade.o fleet_size.o compute.o memory.o) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

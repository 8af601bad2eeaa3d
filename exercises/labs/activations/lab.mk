# exercises/labs/activations/lab.mk: the lab of chapter 4, the bytes one
# layer keeps. The student's layer_bytes.c (from $(LAB_WORK)) is compiled
# with the autograder and the chapter's code/fleet/activations.c, built
# from source; the linker drops what of it the lab does not use (the
# subcommand and the layouts of later chapters).
LAB_FILES_activations := layer_bytes.c

LAB_ACTIVATIONS_FLAGS = -Icode/common -Icode/fleet -Iexercises/labs/common \
  -Iexercises/labs/activations

lab-grade-activations:
	@mkdir -p $(LAB_OUT)
	@$(CC) $(CFLAGS) -O0 -ffunction-sections $(LAB_ACTIVATIONS_FLAGS) \
	  -c code/fleet/activations.c -o $(LAB_OUT)/activations.o
	@$(CC) $(CFLAGS) $(LAB_ACTIVATIONS_FLAGS) -c $(LAB_WORK)/layer_bytes.c \
	  -o $(LAB_OUT)/layer_bytes.o
	@$(CC) $(CFLAGS) $(LAB_ACTIVATIONS_FLAGS) \
	  -c exercises/labs/activations/grade.c -o $(LAB_OUT)/grade.o
	@$(CC) $(CFLAGS) -Wl,--gc-sections \
	  $(addprefix $(LAB_OUT)/,grade.o layer_bytes.o activations.o) \
	  $(LDLIBS) -o $(LAB_OUT)/grade
	@$(LAB_OUT)/grade

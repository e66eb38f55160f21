// rsForEach from script code: the module imports __kiln_rt_for_each. A driver either runs it or refuses the
// module at module_load, naming the service it lacks.
#pragma version(1)
#pragma rs java_package_name(com.kiln.cts)

rs_allocation gIn;
rs_allocation gOut;

int RS_KERNEL twice(int v) { return v * 2; }

void run_twice(void) {
  rsForEach(twice, gIn, gOut);
}

// A shared library the plugin_host test program loads with dlopen during its run: a
// breakpoint set in it before it is loaded must bind and hit (DAP test).
int plugin_scale(int x) {
  int scaled = x * 3;  // plugin breakpoint line
  return scaled + 1;
}

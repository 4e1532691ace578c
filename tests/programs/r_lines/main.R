# An R program for rewind's R line breakpoint tests (tests/interp/r_breakpoint_test.cpp,
# tests/dap/dap_r_breakpoints_test.cpp): helper.R sourced after a native call, its function
# called in a loop, and each call's result printed ("RESULT n value") for comparison with
# what the debugger shows. Run it with srcrefs kept:
#   R -e 'options(keep.source = TRUE); source("main.R")'
invisible(Sys.getpid())  # before the helper is sourced
source(file.path(dirname(sys.frame(1)$ofile), "helper.R"))
results <- c()
for (n in 0:4) {
  value <- accumulate(n)  # call site
  results <- c(results, value)
  cat("RESULT", n, value, "\n")
}
cat("CHURN", churn(60), "\n")
cat("DONE", sum(results), "\n")

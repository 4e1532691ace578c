# An R program for rewind's test of rewind/calls on R (tests/dap/dap_r_breakpoints_test.cpp):
# walk() recurses down to its innermost call, which leaves by return(), and a last call is
# left by an error (caught). It prints what R computed, for the test to compare.
# Run it with srcrefs kept:
#   R -e 'options(keep.source = TRUE); source("r_calls.R")'
walk <- function(n, fail = FALSE) {
  if (fail) stop("asked to fail")
  if (n == 0L) return(0L)  # the innermost call
  s <- n + walk(n - 1L)
  cat("SUM", n, s, "\n")
  s
}
invisible(walk(3L))
r <- tryCatch(walk(1L, fail = TRUE), error = function(e) "error")
cat("FAILED", r, "\n")

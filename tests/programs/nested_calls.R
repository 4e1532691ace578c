# An R program for rewind's interpreter-frame tests: nested calls with typed locals and a
# syscall at the deepest point (file.exists -> stat). Run it with srcrefs kept:
#   Rscript -e 'options(keep.source = TRUE); source("nested_calls.R")'
# where() prints "LINE caller line": the function that called it and that function's line,
# as R itself reports them (sys.calls and the call's srcref), for the tests to compare with.
where <- function() {
  calls <- sys.calls()
  n <- length(calls)
  line <- attr(calls[[n]], "srcref")[1]  # where this call is in its caller
  cat("LINE", deparse(calls[[n - 1]][[1]]), line, "\n", file = stderr())
}
helper <- function(x) {
  y <- x + 1
  label <- "deep"
  where()
  flags <- c(TRUE, FALSE, NA)
  ids <- 1:100  # a compact sequence (ALTREP)
  far <- 3e9:(3e9 + 9)  # beyond integers: a compact sequence of doubles
  file.exists("/rewind-marker-that-does-not-exist")  # the native call
  y
}
middle <- function(n) {
  where()
  if (n == 0) return(helper(10))  # the deepest middle
  middle(n - 1)  # recursion
}
top <- function() {
  where()
  total <- middle(3)  # from top
  total
}
top()

# An R program for rewind's R line-step tests (tests/interp/r_step_test.cpp): nested calls
# with several statements each, a loop, a call through a function without source (sapply)
# and a syscall to stop at (Sys.getpid). Run it with srcrefs kept:
#   R -e 'options(keep.source = TRUE); source("r_steps.R")'
square <- function(v) {
  w <- v * v
  w + 0
}
accumulate <- function(n) {
  total <- 0
  for (i in 1:n) {
    total <- total + square(i)
  }
  last <- square(n)  # the last call
  pid <- Sys.getpid()  # the marker
  total <- total * 2
  doubled <- sapply(1:2, square)
  total + sum(doubled)
}
main <- function() {
  before <- 1
  result <- accumulate(3)  # the call
  cat("result", result, "\n")
}
main()

# The helper file of main.R (rewind's R line breakpoint tests), sourced after a native call.
accumulate <- function(n) {
  # a comment line: a breakpoint here binds to the next line with a statement
  square <- n * n  # first line
  label <- if (n %% 2 == 0) "even" else "odd"
  total <- square + 1
  total  # the result
}

churn <- function(count) {
  acc <- 0
  for (i in seq_len(count)) {
    acc <- acc + i  # churn body
  }
  acc
}

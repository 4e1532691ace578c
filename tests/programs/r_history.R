# An R program for rewind/history on an R local (tests/dap/dap_r_history_test.cpp): running(n)
# assigns its local `total` once per step and prints each value ("BIND n total"), and
# changes one element of its vector `squares` in place ("SQUARES n elements..."); a loop
# makes the three calls one after another, their contexts at one address.
# Run it with srcrefs kept:
#   R -e 'options(keep.source = TRUE); source("r_history.R")'
running <- function(n) {
  total <- 0
  squares <- numeric(n)
  for (k in seq_len(n)) {
    squares[k] <- k * k  # an element changes
    total <- total + squares[k]  # total changes
    cat("BIND", n, total, "\n")
    cat("SQUARES", n, squares, "\n")
  }
  parity <- if (n %% 2L == 0L) "even" else "odd"  # assigned once
  total  # the result
}
results <- numeric(0)
for (n in c(3L, 4L, 2L)) results <- c(results, running(n))  # the calls
cat("RESULTS", results, "\n")

# bench/r_breakpoints' workload: tally() called once per pass of a top-level loop (the pass
# count is the first argument after --args), and never() defined but not called. Run with
# srcrefs kept: R -e 'options(keep.source = TRUE); source("r_loop.R")' --args 1000
tally <- function(i) {
  x <- i * 2  # loop body
  x + 1
}
never <- function() {
  0  # never reached
}
passes <- as.integer(commandArgs(trailingOnly = TRUE)[1])
total <- 0
for (i in seq_len(passes)) total <- total + tally(i)
cat("TOTAL", total, "\n")

# Errors for rewind's R error stops (tests/dap/dap_script_exceptions_test.cpp): check()
# signals an error with stop() for x > 1, caught once by tryCatch; a builtin's own error
# (log of a string) is caught too; then check(3)'s error ends the script.
check <- function(x) {
  if (x > 1) stop("too big: ", x)  # the stop line
  x
}
first <- tryCatch(check(2), error = function(e) conditionMessage(e))
second <- tryCatch(log("a"), error = function(e) 0)
check(3)

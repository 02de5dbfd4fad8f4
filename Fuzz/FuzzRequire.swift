/// A property every input must keep, saying which input broke it: with `-O`
/// a failed `precondition` traps without its message.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

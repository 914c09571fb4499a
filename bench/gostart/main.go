// Command gostart does nothing: the time to run it is a bare Go process's start and exit, the
// least a -c process costs before it does anything (the warm-turn case's reference).
package main

func main() {}

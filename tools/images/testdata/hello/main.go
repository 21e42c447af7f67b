// Command hello is the smallest binary the image builder's test packs.
package main

import "fmt"

func main() { fmt.Println("hello") }

package main

//go:generate go tool gqlgen generate

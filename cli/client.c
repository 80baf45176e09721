/* cli/client.c - placeholder until written */

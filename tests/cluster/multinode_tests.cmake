# Two (or more) simulated nodes on one machine: network and UTS namespaces on a private bridge.

# The SLURM cluster test: daemons started by the test, each example script submitted with sbatch.

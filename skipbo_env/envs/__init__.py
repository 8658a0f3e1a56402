"""The environments over the rules engine: PettingZoo AEC (:mod:`.aec`), a single-agent Gymnasium
wrapper (:mod:`.single_agent`), and a Stable-Baselines3 ``VecEnv`` over the batched engine
(:mod:`.vec_env`). Each imports its RL library only when it is imported itself."""

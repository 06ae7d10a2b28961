"""Launchers: where jobs run. One module per backend behind one interface (`base.Launcher`),
and checkpoint stores (`checkpoints`). The core's state machine and policies call them;
nothing outside a backend branches on a cloud's name."""

import ArgumentParser
import MITMProxy

MITMProxyCommand.main()

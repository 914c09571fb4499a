package broker

import "os/user"

// passwdHome is the home directory of the user this process runs as, from the password
// database ("" when it has none).
func passwdHome() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.HomeDir
}

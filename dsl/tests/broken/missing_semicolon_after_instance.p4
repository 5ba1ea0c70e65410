// error: 2:51: expected `;`
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe
Switch(pipe) main;

